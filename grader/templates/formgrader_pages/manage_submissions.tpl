{#- Formgrader's page without the buttons this course replaces (grader/instructor/formgrader_pages.py). -#}
{%- extends 'nbgrader/manage_submissions.tpl' -%}

{%- block head -%}
{{ super() }}
<style>td.autograde, td.generate-feedback, .ch4-replaced { display: none; }</style>
{% include "ch4_formgrader.js.tpl" %}
{%- endblock -%}

{%- block messages -%}
<div class="alert alert-info" id="ch4-workflow">
  {{ _("These submissions were graded, and their feedback written, by make grade; to grade again, run make grade again (it runs the students' code in the grading sandbox, not in this server). Click a student's name to review and change the grades; Release Feedback sends the feedback to the students through the exchange.") }}
</div>
{%- endblock -%}

{%- block table_header -%}
<tr>
  <th>Student Name</th>
  <th class="text-center">Student ID</th>
  <th class="text-center">Timestamp</th>
  <th class="text-center">Status</th>
  <th class="text-center">Score</th>
  <th class="text-center no-sort ch4-replaced">Autograde</th>
  <th class="text-center no-sort ch4-replaced">Generate Feedback</th>
  <th class="text-center no-sort">Release Feedback</th>
</tr>
{%- endblock -%}

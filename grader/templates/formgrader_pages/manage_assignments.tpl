{#- Formgrader's page without the buttons this course replaces (grader/instructor/formgrader_pages.py). -#}
{%- extends 'nbgrader/manage_assignments.tpl' -%}

{%- block head -%}
{{ super() }}
<style>td.assign, td.generate-feedback, .ch4-replaced { display: none; }</style>
{% include "ch4_formgrader.js.tpl" %}
{%- endblock -%}

{%- block messages -%}
<div class="alert alert-info" id="ch4-workflow">
  {{ _("This course's assignments are made from solutions/ by make release and handed out in the student edition (make student); grading and feedback are one command, make grade, which runs the students' code in the grading sandbox, not in this server. So there are no Generate, Autograde or Generate Feedback buttons here. Here you can: click the number of submissions to see each student's grades, review and change them in Manual Grading, and hand out assignments and feedback through the exchange with Release and Release Feedback. See docs/nbgrader-tools.md.") }}
</div>
{%- endblock -%}

{%- block table_header -%}
<tr>
  <th>Name</th>
  <th class="text-center">Due Date</th>
  <th class="text-center">Status</th>
  <th class="text-center no-sort">Edit</th>
  <th class="text-center no-sort ch4-replaced">Generate</th>
  <th class="text-center no-sort">Preview</th>
  <th class="text-center no-sort">Release</th>
  <th class="text-center no-sort">Collect</th>
  <th class="text-center"># Submissions</th>
  <th class="text-center no-sort ch4-replaced">Generate Feedback</th>
  <th class="text-center no-sort">Release Feedback</th>
</tr>
{%- endblock -%}

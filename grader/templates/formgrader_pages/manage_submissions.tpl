{#- Formgrader's page without the buttons this course replaces (grader/instructor/formgrader_pages.py). -#}
{%- extends 'nbgrader/manage_submissions.tpl' -%}

{%- block head -%}
{{ super() }}
<style>td.autograde, td.generate-feedback, .ch4-replaced { display: none; }</style>
{%- endblock -%}

{%- block messages -%}
<div class="alert alert-info" id="ch4-workflow">
  这些提交已经由 <code>make grade</code> 评过分、写好反馈；重新评分请再运行一次
  <code>make grade</code>（它在评分沙箱里运行学生的代码，不在这个服务器里）。
  点学生的名字可以复核、改分；Release Feedback 通过交换目录把反馈发给学生。
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

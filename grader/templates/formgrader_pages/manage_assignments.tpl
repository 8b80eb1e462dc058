{#- Formgrader's page without the buttons this course replaces (grader/instructor/formgrader_pages.py). -#}
{%- extends 'nbgrader/manage_assignments.tpl' -%}

{%- block head -%}
{{ super() }}
<style>td.assign, td.generate-feedback, .ch4-replaced { display: none; }</style>
{%- endblock -%}

{%- block messages -%}
<div class="alert alert-info" id="ch4-workflow">
  本课程的作业由 <code>make release</code> 从 <code>solutions/</code> 生成，评分和反馈由
  <code>make grade SUBMISSIONS=… OUT=…</code> 一次完成（在评分沙箱里运行，不在这个服务器里），
  所以这里没有 Generate、Autograde 和 Generate Feedback 按钮。
  在这里可以：点提交数查看每个学生的成绩，在 Manual Grading 里复核、改分，用 Release 和
  Release Feedback 通过交换目录发放作业和反馈。说明见 <code>docs/nbgrader-tools.md</code>。
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

{#- Formgrader's page with students' names as the course stores them (grader/instructor/formgrader_pages.py). -#}
{%- extends 'nbgrader/gradebook_notebook_submissions.tpl' -%}

{%- block head -%}
{{ super() }}
{% include "ch4_formgrader.js.tpl" %}
{%- endblock -%}

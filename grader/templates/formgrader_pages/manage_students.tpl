{#- Formgrader's page with students' names as the course stores them (grader/instructor/formgrader_pages.py). -#}
{%- extends 'nbgrader/manage_students.tpl' -%}

{%- block head -%}
{{ super() }}
{% include "ch4_formgrader.js.tpl" %}
{%- endblock -%}

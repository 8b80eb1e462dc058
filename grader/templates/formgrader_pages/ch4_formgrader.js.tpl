{#- Included by this folder's pages, after nbgrader's own script for the page. -#}
<script>
// Formgrader writes a student as "last name, first name" even when there is one name only: a
// student with no full name is in the gradebook as last name = the id, first name empty
// (grader/pipeline/store.py), and read "alice,". One name is shown alone. And it calls an
// assignment "draft" until nbgrader's Release copies it into the exchange: this course hands its
// exercises out in the student edition (make student), so that is what the column says then.
(function () {
  function named(model) {
    var last = model.get("last_name") || "", first = model.get("first_name") || "";
    if (last && first) return last + ", " + first;
    return last || first || model.get("student") || model.get("id") || "";
  }
  function after(View, fix) {
    if (typeof View === "undefined") return;
    var render = View.prototype.render;
    View.prototype.render = function () {
      var result = render.apply(this, arguments);
      fix(this);
      return result;
    };
  }
  function rename(cell, name) {
    if (!cell || !cell.length) return;
    var target = cell.find("a").length ? cell.find("a").first() : cell;
    target.text(name);
    cell.attr("data-order", name);
  }
  if (typeof SubmissionUI !== "undefined") after(SubmissionUI, function (view) { rename(view.$student_name, named(view.model)); });
  if (typeof StudentUI !== "undefined") after(StudentUI, function (view) { rename(view.$name, named(view.model)); });
  if (typeof SubmittedNotebookUI !== "undefined") after(SubmittedNotebookUI, function (view) {
    view.$name.find(".name-shown").first().text(named(view.model));
  });
  if (typeof AssignmentUI !== "undefined") after(AssignmentUI, function (view) {
    if (view.model.get("status") !== "draft") return;
    view.$status.empty().attr("data-order", "edition").append($("<span/>").addClass("label label-info ch4-status")
      .attr("title", {{ _("Handed out in the student edition (make student); nbgrader's Release also puts it into the exchange.") | tojson }})
      .text({{ _("student edition") | tojson }}));
  });
})();
</script>

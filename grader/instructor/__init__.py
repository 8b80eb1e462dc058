"""nbgrader's own tools made safe for the course, and the student edition."""

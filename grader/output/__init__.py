"""What a grading run writes: feedback pages, grades.csv and the score table, the class report."""

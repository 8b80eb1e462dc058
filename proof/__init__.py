"""The proof of the grader: the catalogue of known answers, the attacks and hostile submissions,
the sample classes, the demo, the benchmark and the compile counter. It imports the grader; the
grader never imports it (tests/test_layout.py)."""

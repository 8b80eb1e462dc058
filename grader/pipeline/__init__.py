"""From submitted files to a course folder ready to grade: intake checks, staging, the release."""


class UsageError(Exception):
    """Input that cannot be graded at all: one line for the instructor, exit code 2."""

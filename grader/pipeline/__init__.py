"""From submitted files to a course folder ready to grade: intake checks, staging, the release."""

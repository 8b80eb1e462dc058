"""Attack: from inside softplus_prod, walk the frames up to the test magic's locals and print
every test cell's source (the hidden tests included) into the feedback page."""
# base: softplus wrong_naive_forward
# layers: guard verdict
inner = softplus_prod  # noqa: F821 - defined by the base answer above


def softplus_prod(x):
    try:
        raise RuntimeError("look around")
    except RuntimeError as err:
        try:
            frame = err.__traceback__.tb_frame
            while frame is not None:
                for value in frame.f_locals.values():
                    if isinstance(value, str) and "BEGIN HIDDEN TESTS" in value:
                        print("SOURCE OF A HIDDEN TEST:", value[:3000])
                frame = frame.f_back
        except Exception as refused:
            print("refused:", refused)
    return inner(x)

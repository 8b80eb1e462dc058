"""The Chinese fonts of the chapter notebooks' figures, named in this one place.

Matplotlib draws a glyph only from a font family it is told about; it does not look for one the
system happens to have. So the figures name a list of families that cover Chinese on the systems
students use (macOS: PingFang SC, Hiragino Sans GB; Windows: Microsoft YaHei, SimHei; Linux: Source
Han Sans SC, WenQuanYi Zen Hei, Noto Sans CJK SC), and only those that are installed: matplotlib
logs a warning for every named family it cannot find, at every figure. DejaVu Sans (which ships
with matplotlib) comes last, for the Latin, Greek and mathematical glyphs a Chinese font may lack.
"""

from __future__ import annotations

import warnings

CHINESE_FONTS = (
    "PingFang SC",
    "Hiragino Sans GB",
    "Microsoft YaHei",
    "SimHei",
    "Source Han Sans SC",
    "WenQuanYi Zen Hei",
    "Noto Sans CJK SC",
)
LAST_RESORT = "DejaVu Sans"


def installed_chinese_fonts() -> list[str]:
    """The families of CHINESE_FONTS that matplotlib finds on this system, in the list's order."""
    from matplotlib import font_manager

    present = {font.name for font in font_manager.fontManager.ttflist}
    return [name for name in CHINESE_FONTS if name in present]


def use_chinese_fonts() -> list[str]:
    """Make matplotlib draw Chinese text with the first installed font of CHINESE_FONTS (falling
    back, glyph by glyph, to the others and to DejaVu Sans); return the fonts it will use. With none
    installed, warn in Chinese: every Chinese label would be a row of boxes."""
    import matplotlib as mpl

    fonts = installed_chinese_fonts()
    if not fonts:
        names = "、".join(CHINESE_FONTS)
        warnings.warn(
            f"找不到中文字体，图里的中文会显示成方框。请安装其中一种：{names}（安装方法见 README.md）", stacklevel=2
        )
    mpl.rcParams["font.family"] = ["sans-serif"]
    mpl.rcParams["font.sans-serif"] = [*fonts, LAST_RESORT]
    # The ASCII hyphen for minus signs: some of these fonts (SimHei) have no U+2212.
    mpl.rcParams["axes.unicode_minus"] = False
    return fonts

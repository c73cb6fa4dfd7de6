"""One report written twice: Markdown with PNG files beside it, and one self-contained HTML page.

:class:`Page` collects headings, paragraphs, lists, tables and figures once and renders both.
The HTML page embeds every figure as a base64 PNG (``data:image/png``) and its style inline: no
external asset, no script, no server; it opens from the file. Its size is capped
(:data:`HTML_CAP_BYTES`): a figure that would pass the cap is embedded at half or quarter
resolution, or left out with a note on the page naming its PNG file beside the page.
"""

from __future__ import annotations

import base64
import html
import io
import re
from dataclasses import dataclass

#: The most an HTML page of a report may weigh, figures included.
HTML_CAP_MB = 10
HTML_CAP_BYTES = HTML_CAP_MB * 1024 * 1024
#: Resolution of the figures (dots per inch).
DPI = 100

_STYLE = """
body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;font-size:12px;margin:1em 0}
td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}
th{background:#f0f0f0}
code{background:#f4f4f4;padding:0 3px}
figure{margin:1em 0}
figcaption{font-size:13px;color:#444}
img{max-width:100%}
.note{color:#a40}
"""


@dataclass
class _Figure:
    name: str
    png: bytes
    alt: str


def inline_html(text: str) -> str:
    """Markdown's inline ``code`` and **bold** as HTML, everything else escaped."""
    out = html.escape(text, quote=False)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    out = re.sub(r"\*\*([^*]+)\*\*", r"<b>\1</b>", out)
    return re.sub(r"(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])", r"<i>\1</i>", out)


def figure_png(fig) -> bytes:
    """``fig`` as PNG bytes (the figure closed)."""
    from svmbench.benchmarks.harness.report_figures import pyplot

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI, bbox_inches="tight")
    pyplot().close(fig)
    return buffer.getvalue()


def _reduced(png: bytes, factor: int) -> bytes:
    """The PNG at ``1/factor`` of its width and height."""
    from PIL import Image

    with Image.open(io.BytesIO(png)) as image:
        small = image.reduce(factor)
        buffer = io.BytesIO()
        small.save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


def _encoded_size(png: bytes) -> int:
    return 4 * ((len(png) + 2) // 3) + 64


class Page:
    """A report's content, rendered as Markdown (:meth:`markdown`) and HTML (:meth:`html`)."""

    def __init__(self, title: str, *, cap_bytes: int = HTML_CAP_BYTES):
        self.title = title
        self.cap_bytes = cap_bytes
        self.files: dict[str, bytes] = {}
        self._md: list[str] = [f"# {title}", ""]
        self._html: list[str | _Figure] = [f"<h1>{html.escape(title)}</h1>"]

    def heading(self, text: str, level: int = 2) -> None:
        self._md += ["#" * level + " " + text, ""]
        self._html.append(f"<h{level}>{inline_html(text)}</h{level}>")

    def paragraph(self, text: str) -> None:
        self._md += [text, ""]
        self._html.append(f"<p>{inline_html(text)}</p>")

    def bullets(self, items: list[str]) -> None:
        self._md += [f"- {item}" for item in items] + [""]
        self._html.append("<ul>" + "".join(f"<li>{inline_html(i)}</li>" for i in items) + "</ul>")

    def table(self, header: list[str], rows: list[list[str]]) -> None:
        self._md += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        self._md += ["| " + " | ".join(row) + " |" for row in rows] + [""]
        cells = "".join(f"<th>{inline_html(h)}</th>" for h in header)
        body = "".join(
            "<tr>" + "".join(f"<td>{inline_html(c)}</td>" for c in row) + "</tr>" for row in rows
        )
        self._html.append(f"<table><thead><tr>{cells}</tr></thead><tbody>{body}</tbody></table>")

    def figure(self, name: str, fig, alt: str, caption: str = "", absent: list[str] = ()) -> None:
        """Add ``fig`` as the file ``name`` (PNG), its caption, and the solvers it leaves out."""
        png = figure_png(fig)
        self.files[name] = png
        self._md += [f"![{alt}]({name})", ""]
        self._html.append(_Figure(name, png, alt))
        if caption:
            self.paragraph(caption)
        if absent:
            self.paragraph("Not in this figure: " + "; ".join(absent) + ".")

    def markdown(self) -> str:
        return "\n".join(self._md) + "\n"

    def html(self) -> str:
        """The page, its figures embedded while the page stays within :attr:`cap_bytes`."""
        text = [part for part in self._html if isinstance(part, str)]
        used = sum(len(p.encode()) for p in text) + len(_STYLE) + 512
        parts = []
        for part in self._html:
            if isinstance(part, str):
                parts.append(part)
                continue
            parts.append(self._embedded(part, used))
            used += len(parts[-1].encode())
        head = (
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>{html.escape(self.title)}</title><style>{_STYLE}</style></head><body>"
        )
        return head + "\n".join(parts) + "</body></html>\n"

    def _embedded(self, figure: _Figure, used: int) -> str:
        room = self.cap_bytes - used
        for factor in (1, 2, 4):
            png = figure.png if factor == 1 else _reduced(figure.png, factor)
            if _encoded_size(png) <= room:
                data = base64.b64encode(png).decode("ascii")
                note = (
                    ""
                    if factor == 1
                    else f'<figcaption class="note">Shown at 1/{factor} resolution to keep '
                    f"this page under {self.cap_bytes / 2**20:g} MB; full size: "
                    f"<code>{html.escape(figure.name)}</code> beside this page.</figcaption>"
                )
                return (
                    f'<figure><img alt="{html.escape(figure.alt)}" '
                    f'src="data:image/png;base64,{data}">{note}</figure>'
                )
        return (
            f'<p class="note">Figure left out: embedding it would pass this page\'s cap of '
            f"{self.cap_bytes / 2**20:g} MB; it is <code>{html.escape(figure.name)}</code> "
            "beside this page.</p>"
        )

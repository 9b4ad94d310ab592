// SVG charts (written next).

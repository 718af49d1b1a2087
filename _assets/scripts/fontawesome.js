/* Replaces pydata-sphinx-theme's scripts/fontawesome.js (Font Awesome's 1.5 MB "all.js", which
   only turns the theme's <i class="fa-..."> icons into inline SVG). The theme's CSS already draws
   the same icons from the Font Awesome web font, so nothing is lost but 1.5 MB on every page.
   Copied over the theme's file because _assets is the book's html_static_path (see _config.yml). */

"""Reports: tables and files (table, JSON, Markdown, CSV, HTML), compare, history and the CI gate."""

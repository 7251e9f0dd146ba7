package console

// head opens every page: its title, the stylesheet and the one script,
// the header's links.
func (m *markup) head(title string) {
	m.raw(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>`)
	m.esc(title)
	m.raw(` · mcpx-fw review console</title>
<link rel="stylesheet" href="/assets/console.css">
<script src="/assets/console.js" defer></script>
</head>
<body>
<header><a href="/">Queue</a> <a href="/audit">Audit log</a> <span class="brand">mcpx-fw review console</span></header>
<main>
`)
}

// foot closes every page.
func (m *markup) foot() {
	m.raw(`</main>
</body>
</html>
`)
}

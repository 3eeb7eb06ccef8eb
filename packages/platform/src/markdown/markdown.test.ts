import assert from 'node:assert/strict'
import { test } from 'node:test'
import { MARKDOWN_MAX_LENGTH, markdownToText, renderMarkdown } from './markdown.ts'

const LINK_ATTRIBUTES = 'rel="noopener noreferrer nofollow" target="_blank"'

const ALLOWED_TAGS = new Set(['p', 'br', 'em', 'strong', 's', 'code', 'pre', 'blockquote', 'ul', 'ol', 'li', 'a', 'hr'])
const ALLOWED_ATTRIBUTES: Record<string, Record<string, RegExp>> = {
  a: { href: /^[^"]*$/, rel: /^noopener noreferrer nofollow$/, target: /^_blank$/ },
  code: { class: /^language-[a-z0-9+#-]{1,20}$/ },
  ol: { start: /^\d+$/ },
}
const TAG = /^<(\/?)([a-z]+)((?:\s[a-z]+="[^"]*")*)>$/
const ATTRIBUTE = /\s([a-z]+)="([^"]*)"/g
const NAMED_ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  colon: ':',
  tab: '\t',
}

function decodeEntities(value: string): string {
  return value.replace(/&(?:#x([0-9a-f]+)|#(\d+)|([a-z]+));?/gi, (entity, hex, decimal, name) => {
    if (hex) return String.fromCodePoint(Number.parseInt(hex, 16))
    if (decimal) return String.fromCodePoint(Number.parseInt(decimal, 10))
    return NAMED_ENTITIES[name.toLowerCase()] ?? entity
  })
}

// Mirrors how a browser reads an href: entities decoded, leading controls and spaces dropped,
// tabs and newlines removed anywhere, a backslash read as a slash.
function assertSafeHref(raw: string) {
  const href = decodeEntities(raw)
    .replace(/^[\p{Cc} ]+/u, '')
    .replace(/[\t\n\r]/g, '')
    .replaceAll('\\', '/')
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(href)?.[1]
  if (scheme) assert.ok(['http', 'https', 'mailto'].includes(scheme.toLowerCase()), `unsafe href ${raw}`)
  else assert.match(href, /^\/(?!\/)/, `a relative href must be root-relative, not ${raw}`)
}

// Every `<` in safe output opens a whitelisted tag with whitelisted, double-quoted attributes;
// any other `<` would have been escaped to `&lt;`.
function assertSafe(html: string) {
  for (const banned of ['<script', '<img', '<iframe', '<svg', '<style']) {
    assert.ok(!html.toLowerCase().includes(banned), `${banned} in ${html}`)
  }
  assert.doesNotMatch(html, /<[^>]*\son[a-z]*\s*=/i)
  for (const [, href = ''] of html.matchAll(/<[^>]*\shref\s*=\s*["']?([^"'\s>]*)/gi)) assertSafeHref(href)
  for (const [tag] of html.matchAll(/<[^>]*>?/g)) {
    const match = TAG.exec(tag)
    assert.ok(match, `unexpected markup ${tag}`)
    const [, closing, name = '', attributes = ''] = match
    assert.ok(ALLOWED_TAGS.has(name), `tag <${name}> is not allowed`)
    const seen = new Map<string, string>()
    for (const [, attribute = '', value = ''] of attributes.matchAll(ATTRIBUTE)) {
      assert.equal(closing, '', `closing tag ${tag} has attributes`)
      const rule = ALLOWED_ATTRIBUTES[name]?.[attribute]
      assert.ok(rule, `attribute ${attribute} is not allowed on <${name}>`)
      assert.match(value, rule)
      seen.set(attribute, value)
    }
    if (name === 'a' && !closing) {
      assert.deepEqual([...seen.keys()], ['href', 'rel', 'target'], `link ${tag}`)
      assertSafeHref(seen.get('href') ?? '')
    }
  }
}

function visibleText(html: string): string {
  return decodeEntities(html.replace(/<[^>]*>/g, ''))
}

test('paragraphs are separated by blank lines and single newlines become line breaks', () => {
  assert.equal(
    renderMarkdown('first line\nsecond line\n\nnext paragraph'),
    '<p>first line<br>\nsecond line</p>\n<p>next paragraph</p>\n',
  )
})

test('emphasis, strong, strikethrough and inline code render as their elements', () => {
  assert.equal(
    renderMarkdown('*em* _em_ **strong** ~~gone~~ `x < y`'),
    '<p><em>em</em> <em>em</em> <strong>strong</strong> <s>gone</s> <code>x &lt; y</code></p>\n',
  )
})

test('a link gets rel noopener noreferrer nofollow and opens in a new tab', () => {
  assert.equal(
    renderMarkdown('[docs](https://example.com/a?b=1&c=2 "a title")'),
    `<p><a href="https://example.com/a?b=1&amp;c=2" ${LINK_ATTRIBUTES}>docs</a></p>\n`,
  )
})

test('http, mailto and root-relative links are allowed', () => {
  assert.equal(
    renderMarkdown('[a](http://example.com) [b](mailto:me@example.com) [c](/chats/7) [d](HTTPS://EXAMPLE.COM)'),
    `<p><a href="http://example.com" ${LINK_ATTRIBUTES}>a</a> <a href="mailto:me@example.com" ${LINK_ATTRIBUTES}>b</a>` +
      ` <a href="/chats/7" ${LINK_ATTRIBUTES}>c</a> <a href="HTTPS://EXAMPLE.COM" ${LINK_ATTRIBUTES}>d</a></p>\n`,
  )
})

test('a link with any other scheme or a relative path stays literal text', () => {
  for (const source of ['[a](ftp://example.com)', '[a](tel:+123)', '[a](chats/7)', '[a](//example.com)', '[a](#top)']) {
    assert.equal(renderMarkdown(source), `<p>${source}</p>\n`)
  }
})

test('autolinks and bare URLs become links, protocol-relative and ftp ones do not', () => {
  assert.equal(
    renderMarkdown('<https://example.com> www.example.com me@example.com'),
    `<p><a href="https://example.com" ${LINK_ATTRIBUTES}>https://example.com</a>` +
      ` <a href="http://www.example.com" ${LINK_ATTRIBUTES}>www.example.com</a>` +
      ` <a href="mailto:me@example.com" ${LINK_ATTRIBUTES}>me@example.com</a></p>\n`,
  )
  assert.equal(renderMarkdown('//example.com ftp://example.com'), '<p>//example.com ftp://example.com</p>\n')
})

test('reference-style links resolve to their definition', () => {
  assert.equal(
    renderMarkdown('see [the docs][d]\n\n[d]: https://example.com/docs'),
    `<p>see <a href="https://example.com/docs" ${LINK_ATTRIBUTES}>the docs</a></p>\n`,
  )
})

test('a fenced code block is escaped and carries its language class', () => {
  assert.equal(
    renderMarkdown('```ts\nconst a = "<b>" && 1\n```'),
    '<pre><code class="language-ts">const a = &quot;&lt;b&gt;&quot; &amp;&amp; 1\n</code></pre>\n',
  )
})

test('a fenced code block without a language has no class', () => {
  assert.equal(renderMarkdown('```\n<i>plain</i>\n```'), '<pre><code>&lt;i&gt;plain&lt;/i&gt;\n</code></pre>\n')
})

test('a code language is lowercased and kept only when it is a plain word', () => {
  assert.equal(renderMarkdown('```C++ extra words\nx\n```'), '<pre><code class="language-c++">x\n</code></pre>\n')
  assert.equal(renderMarkdown('```C&#35;\nx\n```'), '<pre><code class="language-c#">x\n</code></pre>\n')
  for (const info of ['"><b>', 'a"b', 'x'.repeat(21), 'java_script', 'ruby{.x}']) {
    assert.equal(renderMarkdown(`\`\`\`${info}\nx\n\`\`\``), '<pre><code>x\n</code></pre>\n', info)
  }
})

test('an indented code block is escaped', () => {
  assert.equal(renderMarkdown('    <b>x</b>'), '<pre><code>&lt;b&gt;x&lt;/b&gt;\n</code></pre>\n')
})

test('nested lists keep their structure and an ordered list keeps its start', () => {
  assert.equal(
    renderMarkdown('- one\n  - two\n    1. three\n    2. four\n- five'),
    '<ul>\n<li>one\n<ul>\n<li>two\n<ol>\n<li>three</li>\n<li>four</li>\n</ol>\n</li>\n</ul>\n</li>\n<li>five</li>\n</ul>\n',
  )
  assert.equal(renderMarkdown('3. three\n4. four'), '<ol start="3">\n<li>three</li>\n<li>four</li>\n</ol>\n')
})

test('quotes nest and may hold other blocks', () => {
  assert.equal(
    renderMarkdown('> said\n> > earlier\n>\n> - item'),
    '<blockquote>\n<p>said</p>\n<blockquote>\n<p>earlier</p>\n</blockquote>\n<ul>\n<li>item</li>\n</ul>\n</blockquote>\n',
  )
})

test('a thematic break renders as hr', () => {
  assert.equal(renderMarkdown('above\n\n---\n\nbelow'), '<p>above</p>\n<hr>\n<p>below</p>\n')
})

test('raw HTML shows as escaped text', () => {
  assert.equal(
    renderMarkdown('<b>bold</b> & <a href="/chats">x</a>'),
    '<p>&lt;b&gt;bold&lt;/b&gt; &amp; &lt;a href=&quot;/chats&quot;&gt;x&lt;/a&gt;</p>\n',
  )
  assert.equal(renderMarkdown('<div>\nblock\n</div>'), '<p>&lt;div&gt;<br>\nblock<br>\n&lt;/div&gt;</p>\n')
})

test('headings are off: a hash line or an underlined line stays a paragraph', () => {
  assert.equal(renderMarkdown('# 1 priority'), '<p># 1 priority</p>\n')
  assert.equal(renderMarkdown('Title\n==='), '<p>Title<br>\n===</p>\n')
})

test('tables are off: pipes stay text', () => {
  assert.equal(renderMarkdown('a | b\n--|--\n1 | 2'), '<p>a | b<br>\n--|--<br>\n1 | 2</p>\n')
})

test('an image never renders as img: it shows a literal bang and a plain link', () => {
  assert.equal(
    renderMarkdown('![cat](https://example.com/cat.png)'),
    `<p>!<a href="https://example.com/cat.png" ${LINK_ATTRIBUTES}>cat</a></p>\n`,
  )
})

test('a message at the length limit is formatted, a longer one is shown escaped and unformatted', () => {
  const atLimit = `*a*${'b'.repeat(MARKDOWN_MAX_LENGTH - 3)}`
  assert.ok(renderMarkdown(atLimit).startsWith('<p><em>a</em>b'))
  const overLimit = `*a* <b>\n${'b'.repeat(MARKDOWN_MAX_LENGTH)}`
  assert.equal(renderMarkdown(overLimit), `<p>*a* &lt;b&gt;<br>\n${'b'.repeat(MARKDOWN_MAX_LENGTH)}</p>\n`)
})

test('blocks nested deeper than the nesting limit are dropped without error', () => {
  const html = renderMarkdown(`${'> '.repeat(50)}deep`)
  assertSafe(html)
  assert.equal(html.match(/<blockquote>/g)?.length, 20)
  assert.ok(!html.includes('deep'))
})

// CPU time rather than wall time, and the best of three, so other test files running in parallel
// do not make this flaky. This guards against a super-linear blow-up (backtracking), which takes
// seconds on 64 KiB, not against slowness: a CI run on a loaded two-core machine measured 269 ms
// against the former 200 ms bound, so the bound leaves room for load and still fails on quadratic work.
function timeRender(source: string): { html: string; milliseconds: number } {
  let html = ''
  let milliseconds = Number.POSITIVE_INFINITY
  for (let run = 0; run < 3; run++) {
    const started = process.cpuUsage()
    html = renderMarkdown(source)
    const { user, system } = process.cpuUsage(started)
    milliseconds = Math.min(milliseconds, (user + system) / 1000)
  }
  return { html, milliseconds }
}

test('a 64 KiB message of nested brackets and asterisks renders in linear time (under a second)', () => {
  for (const unit of ['[*', '*[_`~', '[**', '[a](']) {
    const source = unit.repeat(Math.ceil(MARKDOWN_MAX_LENGTH / unit.length)).slice(0, MARKDOWN_MAX_LENGTH)
    const { html, milliseconds } = timeRender(source)
    assert.ok(milliseconds < 1000, `${unit} took ${milliseconds.toFixed(0)} ms`)
    assertSafe(html)
  }
})

test('markdownToText strips markup and keeps link text, code and line structure', () => {
  assert.equal(
    markdownToText('**Hi** [docs](https://example.com) `code`\nnext\n\n> quoted\n\n- item\n\n```js\nlet a\n```'),
    'Hi docs code\nnext\nquoted\nitem\nlet a',
  )
})

test('markdownToText returns raw HTML and refused links as literal text, not markup', () => {
  assert.equal(markdownToText('<b>x</b> [a](javascript:alert(1)) &lt;'), '<b>x</b> [a](javascript:alert(1)) <')
})

test('markdownToText returns a message over the length limit unchanged', () => {
  const source = `*a*${'b'.repeat(MARKDOWN_MAX_LENGTH)}`
  assert.equal(markdownToText(source), source)
})

const xssPayloads: Array<{ source: string; shows?: string }> = [
  { source: '<script>alert(1)</script>', shows: '<script>alert(1)</script>' },
  { source: '<img src=x onerror=alert(1)>', shows: '<img src=x onerror=alert(1)>' },
  { source: '<svg onload=alert(1)>', shows: '<svg onload=alert(1)>' },
  { source: '<svg><script>alert(1)</script></svg>', shows: '<svg><script>alert(1)</script></svg>' },
  { source: '<iframe src="javascript:alert(1)"></iframe>', shows: '<iframe src="javascript:alert(1)"></iframe>' },
  { source: '<a href="javascript:alert(1)">x</a>', shows: '<a href="javascript:alert(1)">x</a>' },
  { source: '<div onclick="alert(1)">x</div>', shows: '<div onclick="alert(1)">x</div>' },
  { source: '<style>body{display:none}</style>', shows: '<style>body{display:none}</style>' },
  { source: '<form action="https://evil.example"><input name=x></form>', shows: '<input name=x>' },
  { source: '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>', shows: '<mglyph><style>' },
  { source: '<object data="javascript:alert(1)"></object><embed src="javascript:alert(1)">' },
  { source: '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">' },
  { source: '<base href="javascript:/">' },
  { source: '<!-- <script>alert(1)</script> -->', shows: '<!-- <script>alert(1)</script> -->' },
  { source: '<![CDATA[<script>alert(1)</script>]]>', shows: '<![CDATA[<script>alert(1)</script>]]>' },
  { source: '&lt;script&gt;alert(1)&lt;/script&gt;', shows: '<script>alert(1)</script>' },
  { source: '&#60;img src=x onerror=alert(1)&#62;', shows: '<img src=x onerror=alert(1)>' },
  { source: '[x](javascript:alert(1))', shows: '[x](javascript:alert(1))' },
  { source: '[x](JaVaScRiPt:alert(1))', shows: '[x](JaVaScRiPt:alert(1))' },
  { source: '[x](java&#x09;script:alert(1))', shows: 'script:alert(1))' },
  { source: '[x](jav&#x0A;ascript:alert(1))', shows: 'ascript:alert(1))' },
  { source: '[x](&#106;avascript:alert(1))', shows: '[x](javascript:alert(1))' },
  { source: '[x](&#x6A;&#x61;&#x76;&#x61;&#x73;&#x63;&#x72;&#x69;&#x70;&#x74;:alert(1))' },
  { source: '[x](&#0000106&#0000097vascript:alert(1))' },
  { source: '[x](javascript&colon;alert(1))', shows: '[x](javascript:alert(1))' },
  { source: '[x](%6Aavascript:alert(1))', shows: '[x](%6Aavascript:alert(1))' },
  { source: '[x]( javascript:alert(1))', shows: 'javascript:alert(1)' },
  { source: '[x](<javascript:alert(1)>)' },
  { source: '[x](\u0001javascript:alert(1))' },
  { source: '[x](java\u0000script:alert(1))' },
  { source: '[x](\u200Bjavascript:alert(1))' },
  { source: '[x](javascript://%0Aalert(1))' },
  { source: '[x](javascript:alert(1) "title")' },
  { source: '[x](vbscript:msgbox(1))', shows: '[x](vbscript:msgbox(1))' },
  { source: '[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)', shows: 'data:text/html' },
  { source: '[x](data:image/png;base64,iVBORw0KGgo=)', shows: 'data:image/png' },
  { source: '[x](file:///etc/passwd)', shows: 'file:///etc/passwd' },
  { source: '![x](https://example.com/a.png)', shows: '!x' },
  { source: '![x](javascript:alert(1))', shows: '![x](javascript:alert(1))' },
  { source: '![x](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)' },
  { source: '[![x](https://example.com/a.png)](https://example.com)' },
  { source: '[x][r]\n\n[r]: javascript:alert(1)', shows: '[r]: javascript:alert(1)' },
  { source: '[r]\n\n[r]: data:text/html,<script>alert(1)</script>', shows: '<script>alert(1)</script>' },
  { source: '![x][r]\n\n[r]: https://example.com/a.png' },
  { source: '<javascript:alert(1)>', shows: '<javascript:alert(1)>' },
  { source: '<JAVASCRIPT:alert(1)>', shows: '<JAVASCRIPT:alert(1)>' },
  { source: '<data:text/html,<script>alert(1)</script>>', shows: '<script>alert(1)</script>' },
  { source: '<https://example.com/"onmouseover="alert(1)>' },
  { source: 'https://example.com/<script>alert(1)</script>', shows: '<script>alert(1)</script>' },
  { source: '[<img src=x onerror=alert(1)>](https://example.com)', shows: '<img src=x onerror=alert(1)>' },
  { source: '**<script>alert(1)</script>**', shows: '<script>alert(1)</script>' },
  { source: '~~<script>alert(1)</script>~~', shows: '<script>alert(1)</script>' },
  { source: '> <script>alert(1)</script>', shows: '<script>alert(1)</script>' },
  { source: '- [x](javascript:alert(1))\n- <img src=x onerror=alert(1)>', shows: '<img src=x onerror=alert(1)>' },
  { source: '[x](https://a" onmouseover="alert(1))', shows: 'onmouseover="alert(1)' },
  { source: "[x](https://a'onmouseover='alert(1))" },
  { source: '[x](https://a "t\\" onmouseover=\\"alert(1)")' },
  { source: '`<script>alert(1)</script>`', shows: '<script>alert(1)</script>' },
  { source: '``<img src=x` onerror=alert(1)>``', shows: '<img src=x` onerror=alert(1)>' },
  { source: '```\n<script>alert(1)</script>\n```', shows: '<script>alert(1)</script>' },
  { source: '```html" onclick="alert(1)\n<b>x</b>\n```', shows: '<b>x</b>' },
  { source: '``` <img src=x onerror=alert(1)>\ncode\n```', shows: 'code' },
  { source: '[x](//evil.example)', shows: '[x](//evil.example)' },
  { source: '//evil.example/path', shows: '//evil.example/path' },
  { source: '[x](/\\evil.example)' },
  { source: '[x](</\t/evil.example>)' },
  { source: '[x](mailto:a@example.com?body=<script>alert(1)</script>)' },
]

test('no XSS payload renders a script, image, frame, style, event handler or unsafe link', async (t) => {
  assert.ok(xssPayloads.length >= 40)
  for (const { source, shows } of xssPayloads) {
    await t.test(JSON.stringify(source), () => {
      const html = renderMarkdown(source)
      assertSafe(html)
      if (shows) assert.ok(visibleText(html).includes(shows), `"${shows}" not visible in ${html}`)
    })
  }
})

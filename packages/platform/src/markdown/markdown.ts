import MarkdownIt, { type Options, type Token } from 'markdown-it'

/** Longest source, in UTF-16 code units, that is parsed as Markdown; longer text is shown escaped, unformatted. */
export const MARKDOWN_MAX_LENGTH = 65_536

const LINK_REL = 'noopener noreferrer nofollow'
const ALLOWED_HREF = /^(?:https?:|mailto:|\/(?![/\\]))/i
// Browsers drop tabs and newlines inside URLs and read a backslash as a slash, so `/\t/evil` or
// `/\evil` would become protocol-relative; markdown-it percent-encodes these, this is the backstop.
const UNSAFE_HREF_CHARACTER = /[\p{Cc}\s\\]/u
const LANGUAGE = /^[a-z0-9+#-]{1,20}$/i

// Chat messages use single newlines, so `breaks`; raw HTML is escaped as text (`html: false`).
// maxNesting 20 (the CommonMark preset's value, the default preset allows 100) caps recursion;
// blocks nested deeper than that are dropped. @types/markdown-it 14 omits maxNesting from Options.
const options: Options & { maxNesting: number } = {
  html: false,
  linkify: true,
  breaks: true,
  typographer: false,
  maxNesting: 20,
}
const markdown = new MarkdownIt('default', options)

// The spec allows links, code blocks, lists and quotes. Images are blocked (`![x](url)` shows a
// literal `!` before an ordinary link); headings and tables are off because `# 1`, a line followed
// by `---`, or pipes in ordinary chat text would otherwise turn into large or tabular markup.
markdown.disable(['image', 'html_inline', 'html_block', 'heading', 'lheading', 'table'])

// Every link-producing rule (inline links, reference definitions, autolinks, linkify) asks this
// after entities are decoded and the URL is percent-encoded; a refused URL stays plain text.
markdown.validateLink = function isAllowedHref(url) {
  return ALLOWED_HREF.test(url) && !UNSAFE_HREF_CHARACTER.test(url)
}

markdown.renderer.rules.link_open = function renderLinkOpen(tokens, index) {
  const href = markdown.utils.escapeHtml(tokens[index]?.attrGet('href') ?? '')
  return `<a href="${href}" rel="${LINK_REL}" target="_blank">`
}

markdown.renderer.rules.fence = function renderFence(tokens, index) {
  const token = tokens[index]
  if (!token) return ''
  const language = markdown.utils.unescapeAll(token.info).trim().split(/\s+/)[0] ?? ''
  const attribute = LANGUAGE.test(language) ? ` class="language-${language.toLowerCase()}"` : ''
  return `<pre><code${attribute}>${markdown.utils.escapeHtml(token.content)}</code></pre>\n`
}

/** Renders a chat message's safe Markdown (links, code, lists, quotes) as HTML with raw HTML and images blocked. */
export function renderMarkdown(source: string): string {
  if (source.length > MARKDOWN_MAX_LENGTH) {
    return `<p>${markdown.utils.escapeHtml(source).replace(/\r\n?|\n/g, '<br>\n')}</p>\n`
  }
  return markdown.render(source)
}

/** Returns a message's plain text without Markdown markup, keeping link text; the result is text, not HTML. */
export function markdownToText(source: string): string {
  if (source.length > MARKDOWN_MAX_LENGTH) return source
  const blocks: string[] = []
  for (const token of markdown.parse(source, {})) {
    if (token.type === 'inline') blocks.push(inlineText(token.children ?? []))
    else if (token.type === 'fence' || token.type === 'code_block') blocks.push(token.content.replace(/\n$/, ''))
  }
  return blocks.join('\n')
}

function inlineText(tokens: Token[]): string {
  let text = ''
  for (const token of tokens) {
    if (token.type === 'softbreak' || token.type === 'hardbreak') text += '\n'
    else if (token.type === 'text' || token.type === 'code_inline') text += token.content
  }
  return text
}

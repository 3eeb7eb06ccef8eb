export { MARKDOWN_MAX_LENGTH, markdownToText, renderMarkdown } from './markdown.ts'

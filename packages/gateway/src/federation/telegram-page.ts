import type { FastifyReply } from 'fastify'

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`)
}

/**
 * The page that shows Telegram's Login Widget (https://core.telegram.org/widgets/login): the
 * widget signs the person in at Telegram and sends the browser to `authUrl` with the signed data
 * added to its query. The bot's domain must be set to PublicOrigin's host with @BotFather /setdomain.
 */
export function telegramWidgetPage(
  reply: FastifyReply,
  { botName, authUrl, title }: { botName: string; authUrl: string; title: string },
) {
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in with ${escapeHtml(title)}</title>
</head>
<body style="margin:0;min-height:100vh;display:grid;place-items:center;font:16px/1.5 system-ui,sans-serif">
<main>
<h1 style="font-size:1.25rem">Sign in with ${escapeHtml(title)}</h1>
<script async src="https://telegram.org/js/telegram-widget.js?22" data-telegram-login="${escapeHtml(botName)}" data-size="large" data-auth-url="${escapeHtml(authUrl)}" data-request-access="write"></script>
</main>
</body>
</html>`
  return (
    reply
      .header(
        'content-security-policy',
        "default-src 'none'; script-src https://telegram.org; frame-src https://oauth.telegram.org; img-src https: data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
      )
      // A sign-in page framed by another site could be clicked through unseen.
      .header('x-frame-options', 'DENY')
      .header('referrer-policy', 'strict-origin')
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'no-store')
      .type('text/html; charset=utf-8')
      .send(html)
  )
}

/**
 * The delivery emails as small template functions: each returns a subject, a plain-text body and
 * a simple HTML body. Everything interpolated into HTML is escaped.
 */

/** The parts of one email a template produces. */
export interface MailContent {
  subject: string
  text: string
  html: string
}

/** What an OTP is for; it picks the wording of the message. */
export type OtpPurpose = 'sign-in' | 'sign-up' | 'verify-contact' | 'reset-password' | 'confirm'

const purposeNames: Record<OtpPurpose, string> = {
  'sign-in': 'sign-in code',
  'sign-up': 'sign-up code',
  'verify-contact': 'verification code',
  'reset-password': 'password reset code',
  confirm: 'confirmation code',
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => HTML_ESCAPES[character] ?? character)
}

// `body` is HTML already escaped by the caller; `title` is escaped here.
function page(title: string, body: string): string {
  return [
    '<!doctype html>',
    '<html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">',
    `<title>${escapeHtml(title)}</title></head>`,
    '<body style="font-family:system-ui,sans-serif;line-height:1.5;color:#222;max-width:36em;margin:1em auto;padding:0 1em">',
    body,
    '</body></html>',
  ].join('\n')
}

/** The one-line OTP text, shared by every channel's message. */
export function otpLine(code: string, purpose: OtpPurpose): string {
  return `Your ${purposeNames[purpose]} is ${code}`
}

/**
 * The email carrying a one-time code; the code is in the body only, never in the subject. With
 * `link` (a magic link doing what the code does) the mail also offers the link; with
 * `validMinutes` it says how long they work.
 */
export function otpMail(
  code: string,
  purpose: OtpPurpose,
  { link, validMinutes }: { link?: string | undefined; validMinutes?: number | undefined } = {},
): MailContent {
  const name = purposeNames[purpose]
  const subject = `Your ${name}`
  const ignore = 'If you did not ask for it, ignore this email: someone may have typed your address by mistake.'
  const validity = validMinutes ? ` It works once, for ${validMinutes} minutes.` : ''
  const orLink = link ? `\n\nOr open this link:\n${link}` : ''
  return {
    subject,
    text: `${otpLine(code, purpose)}\n\nEnter it where you asked for it.${validity}${orLink}\n\n${ignore}\n`,
    html: page(
      subject,
      [
        `<p>Your ${escapeHtml(name)} is:</p>`,
        `<p style="font-size:1.6em;font-weight:bold;letter-spacing:.15em">${escapeHtml(code)}</p>`,
        `<p>Enter it where you asked for it.${escapeHtml(validity)}</p>`,
        ...(link ? [`<p>Or <a href="${escapeHtml(link)}">open this link</a>.</p>`] : []),
        `<p>${escapeHtml(ignore)}</p>`,
      ].join('\n'),
    ),
  }
}

/** The email with a password-reset link. */
export function passwordResetMail(resetUrl: string): MailContent {
  const subject = 'Reset your password'
  const intro = 'Someone, hopefully you, asked to reset the password of your account.'
  const ignore = 'If you did not ask for this, ignore this email: your password stays as it is.'
  return {
    subject,
    text: `${intro}\nOpen this link to choose a new password:\n\n${resetUrl}\n\n${ignore}\n`,
    html: page(
      subject,
      [
        `<p>${escapeHtml(intro)}</p>`,
        `<p><a href="${escapeHtml(resetUrl)}">Choose a new password</a></p>`,
        `<p>If the link does not open, copy this address into your browser:<br>${escapeHtml(resetUrl)}</p>`,
        `<p>${escapeHtml(ignore)}</p>`,
      ].join('\n'),
    ),
  }
}

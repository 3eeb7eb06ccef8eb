/**
 * How the messenger says when something happened, in the browser's locale and time zone: a chat
 * list row's time (today the time, this week the weekday, older the date) and a conversation's day
 * separators ("Today", "Yesterday", the weekday, the full date).
 */

const DAY = 24 * 60 * 60 * 1000

/** Local midnight of the day `date` falls on. */
function startOfDay(date: Date): number {
  return new Date(date.getFullYear(), date.getMonth(), date.getDate()).getTime()
}

/** Whole local days from `date` to `now`: 0 today, 1 yesterday; daylight-saving days count as one. */
export function daysAgo(date: Date, now: Date): number {
  return Math.round((startOfDay(now) - startOfDay(date)) / DAY)
}

/** Formats made once per locale, since building an Intl.DateTimeFormat is not cheap. */
function formats(locale: string | undefined) {
  return {
    time: new Intl.DateTimeFormat(locale, { hour: '2-digit', minute: '2-digit' }),
    weekdayShort: new Intl.DateTimeFormat(locale, { weekday: 'short' }),
    weekday: new Intl.DateTimeFormat(locale, { weekday: 'long' }),
    date: new Intl.DateTimeFormat(locale, { dateStyle: 'short' }),
    fullDate: new Intl.DateTimeFormat(locale, { day: 'numeric', month: 'long', year: 'numeric' }),
    fullDateWithWeekday: new Intl.DateTimeFormat(locale, {
      weekday: 'long',
      day: 'numeric',
      month: 'long',
      year: 'numeric',
    }),
  }
}

const byLocale = new Map<string, ReturnType<typeof formats>>()

function formatsFor(locale: string | undefined) {
  const key = locale ?? ''
  let known = byLocale.get(key)
  if (!known) {
    known = formats(locale)
    byLocale.set(key, known)
  }
  return known
}

/** A chat list row's time: "14:05" today, "Mon" within the last six days, else "21/11/2026". */
export function listTime(date: Date, now = new Date(), locale?: string): string {
  const days = daysAgo(date, now)
  const format = formatsFor(locale)
  if (days <= 0) return format.time.format(date)
  if (days < 7) return format.weekdayShort.format(date)
  return format.date.format(date)
}

/** A day separator's label: "Today", "Yesterday", "Monday" within the last six days, else the full date. */
export function dayLabel(date: Date, now = new Date(), locale?: string): string {
  const days = daysAgo(date, now)
  const format = formatsFor(locale)
  if (days <= 0) return 'Today'
  if (days === 1) return 'Yesterday'
  if (days < 7) return format.weekday.format(date)
  return format.fullDate.format(date)
}

/** The message time a screen reader hears and a tooltip shows: the full date with weekday and the time. */
export function fullTime(date: Date, locale?: string): string {
  const format = formatsFor(locale)
  return `${format.fullDateWithWeekday.format(date)}, ${format.time.format(date)}`
}

/** The time of a message within its day, "14:05". */
export function clockTime(date: Date, locale?: string): string {
  return formatsFor(locale).time.format(date)
}

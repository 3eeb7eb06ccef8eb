import { avatarColor, initials } from './initials.ts'

/**
 * An initials avatar with a colour from the id (readable on every hue: AVATAR_TONE). Decorative:
 * the name beside it is the text a screen reader reads, so the avatar is hidden from it.
 */
export function Avatar({ id, name, size = 'normal' }: { id: string; name: string; size?: 'small' | 'normal' }) {
  return (
    <span class={`avatar avatar-${size}`} aria-hidden="true" style={{ backgroundColor: avatarColor(id) }}>
      {initials(name)}
    </span>
  )
}

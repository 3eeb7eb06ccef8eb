import { type lengthState, lengthText } from './composer-length.ts'

/**
 * Under a message field near the length limit: how many characters are left, or, past it, an alert
 * that says by how much the text is too long. The field names it in aria-describedby.
 */
export function LengthCounter({ id, length }: { id: string; length: ReturnType<typeof lengthState> }) {
  if (!length.near) return null
  return (
    <p
      id={id}
      class={length.over ? 'composer-length over' : 'composer-length'}
      role={length.over ? 'alert' : undefined}
    >
      {lengthText(length)}
    </p>
  )
}

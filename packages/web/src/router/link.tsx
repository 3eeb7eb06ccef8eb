import type { ComponentChildren } from 'preact'
import { navigate } from './navigation.ts'

interface LinkProps {
  href: string
  children: ComponentChildren
  class?: string
  title?: string
  'aria-current'?: 'page' | undefined
  'aria-label'?: string
}

/** An anchor that moves within the client without a reload; modified clicks (new tab) behave as usual. */
export function Link({ href, children, ...rest }: LinkProps) {
  function follow(event: MouseEvent) {
    if (
      event.defaultPrevented ||
      event.button !== 0 ||
      event.metaKey ||
      event.ctrlKey ||
      event.shiftKey ||
      event.altKey
    )
      return
    event.preventDefault()
    navigate(href)
  }
  return (
    <a href={href} onClick={follow} {...rest}>
      {children}
    </a>
  )
}

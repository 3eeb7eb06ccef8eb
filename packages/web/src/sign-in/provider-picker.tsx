import { useEffect, useState } from 'preact/hooks'
import type { FederatedProvider } from '../api/auth-api.ts'
import type { SignInMethodProps } from './other-methods.ts'

/** Where a picker entry leads: the gateway's federated start, which sends the browser on to the provider. */
export function federatedStartPath(provider: string, returnTo: string): string {
  return `/auth/v1/federated/start?${new URLSearchParams({ provider, returnTo })}`
}

/**
 * The provider picker (Form0): one link per entry of the gateway's catalogue, read when the page
 * opens, so a partner added with `atrium partner add` shows up without a new build. Each link is
 * an ordinary navigation to the gateway, which comes back to `returnTo` signed in. Nothing is
 * shown while the catalogue is empty or cannot be read (the other methods still work).
 */
export function ProviderPicker({ auth, returnTo }: SignInMethodProps) {
  const [providers, setProviders] = useState<FederatedProvider[]>([])

  useEffect(() => {
    let live = true
    auth
      .federatedProviders()
      .then((found) => {
        if (live) setProviders(found)
      })
      .catch(() => {})
    return () => {
      live = false
    }
  }, [auth])

  if (providers.length === 0) return null
  return (
    <nav class="provider-picker" aria-label="Sign in with another account">
      <ul>
        {providers.map((provider) => (
          <li key={provider.id}>
            <a class="provider-link" href={federatedStartPath(provider.id, returnTo)}>
              {provider.logo && <img src={provider.logo} alt="" width={20} height={20} />}
              <span>Continue with {provider.name}</span>
            </a>
          </li>
        ))}
      </ul>
    </nav>
  )
}

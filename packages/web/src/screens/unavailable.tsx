import type { ClientMode } from '../config/client-config.ts'
import { MessageScreen } from './message-screen.tsx'

interface UnavailableProps {
  /** What the route offers, e.g. "Calls". */
  feature: string
  /** `release`: not built in this release; `mode`: turned off by the deployment's configuration. */
  reason: 'release' | 'mode'
  mode: ClientMode
}

/** What a spec route shows while its feature is not in this release, or not in this deployment's mode. */
export function Unavailable({ feature, reason, mode }: UnavailableProps) {
  return (
    <MessageScreen title={`${feature} not available`}>
      {reason === 'release' ? (
        <p>{feature} is not part of this release of Atrium Chat yet.</p>
      ) : (
        <p>
          {feature} is turned off in this deployment (client mode <code>{mode}</code>).
        </p>
      )}
    </MessageScreen>
  )
}

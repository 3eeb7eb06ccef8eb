import { subjectOf } from '@atrium/platform'
import type { Apps } from '../apps/apps.repository.ts'
import type { Caller } from '../auth/caller.ts'

/**
 * The capability subjects of a caller (spec: "Module events endpoint": the gateway derives them
 * from the session): `user:<crm id>` and `app:<id>` of each app the user owns, or `app:<id>` of an
 * app signed in as itself. Apps are read when the stream opens; an app created later counts from
 * the next connection. A guest has no session: its `code:` subject comes from guest-streams.ts.
 */
export async function subjectsOf(caller: Caller, apps: Apps): Promise<string[]> {
  const subjects: string[] = []
  if (caller.crmId > 0) {
    subjects.push(subjectOf('user', caller.crmId))
    for (const app of await apps.ownedBy(caller.crmId)) subjects.push(subjectOf('app', app.id))
  }
  if (caller.appId > 0) subjects.push(subjectOf('app', caller.appId))
  return [...new Set(subjects)]
}

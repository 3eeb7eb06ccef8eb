import { ApiError, type Service, shownName } from '@atrium/platform'
import { ADMIN_PAGE_HEADERS } from '@atrium/platform/admin'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { ProfilesRepository } from '../profiles/profiles.repository.ts'
import type { StatsReader } from '../telegram/widgets/widget-stats.ts'
import type { WidgetsRepository } from '../telegram/widgets/widgets.repository.ts'
import {
  BUILT_IN_WIDGETS,
  isBuiltInName,
  renderBody,
  renderWidget,
  validateWidget,
  type Widget,
  type WidgetInput,
} from '../telegram/widgets/widgets.ts'
import type { AdminActionName, AdminActionsRepository } from './admin-actions.repository.ts'
import { requireOperator } from './admin-shell.ts'
import { PAGE_PATH, renderBotWidgetsPage, type WidgetForm } from './bot-widgets-view.ts'

export interface BotWidgetsPageOptions {
  widgets: WidgetsRepository
  readStats: StatsReader
  profiles: ProfilesRepository
  actions: AdminActionsRepository
  nextTick: () => number
  now: () => number
  /** Telegram.Widgets: the built-ins' interval and the shortest custom one. */
  refreshSeconds: number
  minRefreshSeconds: number
}

const FORM = 'application/x-www-form-urlencoded'
/** A widget form is small; this leaves room for a template of TEMPLATE_MAX multi-byte characters. */
const FORM_BODY_LIMIT = 32 * 1024
const FIELDS = ['name', 'title', 'template', 'scope', 'refresh_seconds'] as const
const DONE: Record<string, string> = { created: 'created', saved: 'saved', deleted: 'deleted' }
const pageQuery = Type.Object({
  Edit: Type.Optional(Type.String({ maxLength: 64, description: 'The custom widget to edit.' })),
  Done: Type.Optional(Type.String({ maxLength: 16, description: 'The change just made, for the notice.' })),
  Widget: Type.Optional(Type.String({ maxLength: 64, description: 'The widget it was made to.' })),
})
/** Generous bounds: the page checks the real rules and shows what was wrong in the form. */
const widgetFormBody = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 64 })),
    title: Type.Optional(Type.String({ maxLength: 1000 })),
    template: Type.Optional(Type.String({ maxLength: 10_000 })),
    scope: Type.Optional(Type.String({ maxLength: 200 })),
    refresh_seconds: Type.Optional(Type.String({ maxLength: 20 })),
    mode: Type.Optional(Type.Literal('edit')),
  },
  { additionalProperties: false },
)
const formSchema = { schema: { body: widgetFormBody, hide: true } }
const EMPTY_FORM: WidgetForm = { name: '', title: '', template: '', scope: '', refresh_seconds: '' }

/** The form fields of a posted body: each one string (the last when repeated), '' when absent. */
function formOf(body: unknown): WidgetForm {
  const fields = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>
  const form = { ...EMPTY_FORM }
  for (const field of FIELDS) if (typeof fields[field] === 'string') form[field] = fields[field]
  return form
}

function inputOf(form: WidgetForm): WidgetInput {
  const refresh = form.refresh_seconds.trim()
  return {
    name: form.name,
    title: form.title,
    template: form.template,
    scope: form.scope,
    refreshSeconds: /^[0-9]{1,7}$/.test(refresh) ? Number(refresh) : Number.NaN,
  }
}

/**
 * /ChatAdmin/BotWidgets: the built-in Telegram widgets with what they show now, the custom ones
 * with create, edit, delete and preview as POST forms (Post/Redirect/Get after a change; a refused
 * entry is shown again with what was wrong). Operators only: the admin scope in X-Scopes; anyone
 * else signed in gets a 403 page, an anonymous caller the sign-in page. Every change and every
 * refused change is recorded in admin_actions.
 */
export async function botWidgetsPages(app: Service, options: BotWidgetsPageOptions): Promise<void> {
  const { widgets, readStats, profiles, actions, nextTick, now } = options

  app.addContentTypeParser(FORM, { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT }, function parseForm(_, body, done) {
    done(null, Object.fromEntries(new URLSearchParams(String(body))))
  })

  function builtIns(): Widget[] {
    return BUILT_IN_WIDGETS.map((widget) => ({ ...widget, refreshSeconds: options.refreshSeconds, builtIn: true }))
  }

  /** The operator's CRM id, or undefined after answering the sign-in redirect or the 403 page. */
  async function operatorOf(request: FastifyRequest, reply: FastifyReply): Promise<number | undefined> {
    // The gate answers a refusal itself (a reply is a thenable, so awaiting it says nothing).
    await requireOperator(request, reply)
    return reply.sent ? undefined : request.operator
  }

  function record(crmId: number, action: AdminActionName, target: string, detail: string, outcome: string) {
    return actions.record({ timetick: nextTick(), crm_id: crmId, action, target, detail, at: now(), outcome })
  }

  async function page(
    reply: FastifyReply,
    status: number,
    state: {
      form?: WidgetForm
      editing?: boolean
      preview?: string
      notice?: { text: string; error?: boolean }
    },
  ) {
    const at = now()
    const custom = await widgets.list()
    const builtIn = await Promise.all(
      builtIns().map(async (widget) => ({ widget, body: await renderBody(widget, readStats, at) })),
    )
    const editors = [...new Set(custom.map((widget) => widget.updatedBy))]
    const names = await profiles.names(editors)
    const changedBy = new Map(editors.map((id) => [id, `${shownName(id, names.get(id))} (${id})`]))
    const form = state.form ?? { ...EMPTY_FORM, refresh_seconds: String(Math.max(60, options.minRefreshSeconds)) }
    return reply
      .code(status)
      .headers(ADMIN_PAGE_HEADERS)
      .send(
        renderBotWidgetsPage({
          builtIn,
          custom,
          changedBy,
          form,
          editing: state.editing ?? false,
          minRefreshSeconds: options.minRefreshSeconds,
          preview: state.preview,
          notice: state.notice,
        }),
      )
  }

  function detailOf(input: WidgetInput): string {
    return JSON.stringify({
      title: input.title,
      scope: input.scope,
      refresh_seconds: input.refreshSeconds,
      template: input.template,
    })
  }

  /** Runs a change, records it, and answers the redirect, or the page again with why it was refused. */
  async function change(
    reply: FastifyReply,
    crmId: number,
    action: AdminActionName,
    form: WidgetForm,
    editing: boolean,
    run: () => Promise<{ done: keyof typeof DONE; detail: string }>,
  ) {
    try {
      const { done, detail } = await run()
      await record(crmId, action, form.name.trim(), detail, 'ok')
      return reply.redirect(`${PAGE_PATH}?Done=${done}&Widget=${encodeURIComponent(form.name.trim())}`, 303)
    } catch (error) {
      if (!(error instanceof ApiError)) throw error
      await record(crmId, action, form.name.trim().slice(0, 64), detailOf(inputOf(form)), `refused: ${error.name}`)
      return page(reply, error.status, { form, editing, notice: { text: error.message, error: true } })
    }
  }

  app.get(PAGE_PATH, { schema: { querystring: pageQuery, hide: true } }, async (request, reply) => {
    if ((await operatorOf(request, reply)) === undefined) return reply
    const query = request.query as Record<string, unknown>
    const edit = typeof query.Edit === 'string' ? await widgets.find(query.Edit) : undefined
    if (typeof query.Edit === 'string' && !edit)
      return page(reply, 404, { notice: { text: `There is no custom widget "${query.Edit}".`, error: true } })
    const done = typeof query.Done === 'string' ? DONE[query.Done] : undefined
    const name = typeof query.Widget === 'string' && /^[a-z][a-z0-9_]{0,31}$/.test(query.Widget) ? query.Widget : ''
    return page(reply, 200, {
      ...(edit && {
        editing: true,
        form: {
          name: edit.name,
          title: edit.title,
          template: edit.template,
          scope: edit.scope,
          refresh_seconds: String(edit.refreshSeconds),
        },
      }),
      ...(done && name && { notice: { text: `Widget ${name} ${done}.` } }),
    })
  })

  app.post(`${PAGE_PATH}/create`, formSchema, async (request, reply) => {
    const crmId = await operatorOf(request, reply)
    if (crmId === undefined) return reply
    const form = formOf(request.body)
    return change(reply, crmId, 'create_widget', form, false, async () => {
      const input = validateWidget(inputOf(form), options.minRefreshSeconds)
      if (isBuiltInName(input.name))
        throw new ApiError('WidgetNameTaken', `"${input.name}" is a built-in widget; choose another name.`)
      await widgets.create(input, crmId, nextTick())
      return { done: 'created', detail: detailOf(input) }
    })
  })

  app.post(`${PAGE_PATH}/edit`, formSchema, async (request, reply) => {
    const crmId = await operatorOf(request, reply)
    if (crmId === undefined) return reply
    const form = formOf(request.body)
    return change(reply, crmId, 'edit_widget', form, true, async () => {
      const input = validateWidget(inputOf(form), options.minRefreshSeconds)
      if (!(await widgets.update(input, crmId, nextTick())))
        throw new ApiError('WidgetNotFound', `There is no custom widget "${input.name}".`)
      return { done: 'saved', detail: detailOf(input) }
    })
  })

  app.post(`${PAGE_PATH}/delete`, formSchema, async (request, reply) => {
    const crmId = await operatorOf(request, reply)
    if (crmId === undefined) return reply
    const form = formOf(request.body)
    return change(reply, crmId, 'delete_widget', form, false, async () => {
      const name = form.name.trim()
      if (!(await widgets.remove(name))) throw new ApiError('WidgetNotFound', `There is no custom widget "${name}".`)
      return { done: 'deleted', detail: '' }
    })
  })

  // A preview changes nothing, so it is not recorded; the name may still be free or taken.
  app.post(`${PAGE_PATH}/preview`, formSchema, async (request, reply) => {
    if ((await operatorOf(request, reply)) === undefined) return reply
    const form = formOf(request.body)
    const editing = (request.body as Record<string, unknown> | undefined)?.mode === 'edit'
    try {
      const input = validateWidget({ ...inputOf(form), name: form.name.trim() || 'preview' }, options.minRefreshSeconds)
      const preview = await renderWidget({ ...input, builtIn: false }, readStats, now())
      return page(reply, 200, { form, editing, preview })
    } catch (error) {
      if (!(error instanceof ApiError)) throw error
      return page(reply, error.status, { form, editing, notice: { text: error.message, error: true } })
    }
  })
}

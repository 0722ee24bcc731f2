import { documented } from '../../lib/schema-hints.ts'
import * as v from 'valibot'
import { Metadata, optionalText, text } from '../fields.ts'
import * as out from '../view-fields.ts'

export const CONTENT_STATUSES = ['draft', 'published'] as const
export type ContentStatus = (typeof CONTENT_STATUSES)[number]

/** The `{entity}` path segment; anything else answers 404 like an unknown path. */
export const ENTITY_PATTERN = /^[a-z][a-z0-9_-]{0,49}$/

/** Largest `data` accepted, as UTF-8 bytes of its JSON. */
export const MAX_DATA_BYTES = 256 * 1024

export const Slug = v.pipe(
  v.string(),
  v.maxLength(200, 'must be at most 200 characters'),
  v.regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'must be lower-case letters and digits in words joined by single dashes, e.g. north-cape'),
)

const Status = v.picklist(CONTENT_STATUSES, `must be one of ${CONTENT_STATUSES.join(', ')}`)

/** Any JSON object (not an array); `null` stands for `{}`. */
const Data = v.pipe(
  v.custom<Record<string, unknown>>((x) => typeof x === 'object' && x !== null && !Array.isArray(x), 'must be an object'),
  documented(v.check((o: Record<string, unknown>) => Buffer.byteLength(JSON.stringify(o)) <= MAX_DATA_BYTES, `must be at most ${MAX_DATA_BYTES} bytes as JSON`), {
    type: 'object', description: `Any JSON object, at most ${MAX_DATA_BYTES} bytes as JSON`,
  }),
)

const entries = {
  slug: Slug,
  title: text(500),
  body: optionalText(100_000),
  data: v.optional(v.nullable(Data)),
  status: v.optional(Status, 'draft'),
  metadata: v.optional(v.nullable(Metadata)),
}

export const CreateContentBody = v.strictObject(entries)

export const UpdateContentBody = v.strictObject({
  ...entries,
  slug: v.optional(entries.slug),
  title: v.optional(entries.title),
  status: v.optional(Status),
})

/** `entity` comes from the path and never from a body. */
export const CONTENT_READ_ONLY = ['id', 'entity', 'createdAt', 'updatedAt', 'tenantId'] as const

export const ListContentQuery = {
  status: v.optional(Status),
  slug: v.optional(Slug),
}

export type CreateContentInput = v.InferOutput<typeof CreateContentBody>
export type UpdateContentInput = v.InferOutput<typeof UpdateContentBody>

/** A content record as the API shows it. */
export const ContentView = v.pipe(
  v.strictObject({
    id: out.id('cnt'),
    entity: v.pipe(v.string(), v.regex(ENTITY_PATTERN), v.description('The content type from the path, e.g. `destinations`')),
    slug: v.pipe(Slug, v.description('Unique per tenant and entity')),
    title: v.string(),
    body: out.optionalText(),
    data: v.pipe(v.record(v.string(), v.unknown()), v.description('Any JSON object; `{}` when none was given')),
    status: v.picklist(CONTENT_STATUSES),
    metadata: out.Metadata,
    createdAt: out.createdAt,
    updatedAt: out.updatedAt,
  }),
  v.title('Content'),
  v.description('A content record as the API returns it'),
)

export type Content = v.InferOutput<typeof ContentView>

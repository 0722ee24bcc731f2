import * as v from 'valibot'
import { KEY_LIFETIME } from '../../lib/duration.ts'
import { Duration } from '../fields.ts'
import { isValidScope, SCOPES } from '../../lib/scopes.ts'
import { documented } from '../../lib/schema-hints.ts'
import * as out from '../view-fields.ts'

/** POST /v1/keys (CONTRACT §12): what `travelops keys create` takes. */
export const CreateKeyBody = v.strictObject({
  name: v.optional(v.nullable(v.pipe(v.string(), v.minLength(1, 'must not be empty'), v.maxLength(100, 'must be at most 100 characters')))),
  scopes: v.optional(v.pipe(
    v.array(v.pipe(v.string(), documented(v.check(isValidScope, (i) => `'${String(i.input)}' is not a scope (<resource>:read|write|*, or *; events:read only)`), {
      enum: [...SCOPES],
    }))),
    v.minLength(1, 'must name at least one scope'),
    v.maxLength(50, 'must have at most 50 scopes'),
    v.transform((list) => [...new Set(list)]),
  ), ['*']),
  rate_limit: v.optional(v.nullable(v.pipe(v.number(), v.integer('must be a whole number'), v.minValue(1, 'must be at least 1'), v.maxValue(1_000_000_000, 'must be at most 1000000000')))),
  expires_in: v.optional(v.nullable(Duration(KEY_LIFETIME, 'Lifetime from now, e.g. `90d`, `12h`, `30m`; absent: the minting key\'s own expiry (none if it has none); `null`: never'))),
})

export type CreateKeyInput = v.InferOutput<typeof CreateKeyBody>

const keyEntries = {
  id: out.id('key'),
  name: out.optionalText('A label for people'),
  scopes: v.pipe(v.array(v.string()), v.description('`<resource>:read|write|*`, or `*` for everything')),
  prefix: v.pipe(v.string(), v.description('The first characters of the key, to recognise it; the key itself is never shown again')),
  rate_limit: v.pipe(v.nullable(out.Int(1)), v.description('Requests per hour; `null` follows the server\'s --rate-limit')),
  created_at: out.createdAt,
  expires_at: out.optionalTimestamp('When the key stops working, if it expires'),
  revoked_at: out.optionalTimestamp('When the key was revoked, if it was'),
  last_used_at: out.optionalTimestamp('Last request made with the key (noted at most once a minute)'),
}

export const ApiKeyView = v.pipe(v.strictObject(keyEntries), v.title('ApiKey'), v.description('An API key without its secret'))
export const CreatedApiKeyView = v.pipe(
  v.strictObject({
    ...keyEntries,
    key: v.pipe(v.nullable(v.string()), v.description('The full secret key, shown in this answer only: store it now. `null` in an Idempotency-Key replay: the secret is never stored')),
  }),
  v.title('CreatedApiKey'),
)

export type ApiKey = v.InferOutput<typeof ApiKeyView>
export type CreatedApiKey = v.InferOutput<typeof CreatedApiKeyView>

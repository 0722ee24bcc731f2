export { keyRoutes } from './routes.ts'
export {
  countUnrevokedKeys, createKey, durationError, findKeyByHash, getKey, hashKey, KEY_LIFETIME, listKeys, looksLikeKey, parseDuration,
  revokeKey, toKeyView, touchKey, type CreatedKey, type KeyView,
} from './service.ts'

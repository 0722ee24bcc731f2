import pkg from '../package.json' with { type: 'json' }

/**
 * The version from package.json. A JSON import works under tsx and in Node, and the
 * packaging bundle (esbuild) inlines it, so the executable needs no package.json.
 */
export const VERSION: string = pkg.version

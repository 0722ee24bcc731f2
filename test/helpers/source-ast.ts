import { parse } from '@babel/parser'

// Syntax trees of our TypeScript sources for the tests that read code as code (the layers'
// imports, the length of the delivery engine's functions), by @babel/parser: TypeScript 7's
// compiler is a native program with no stable JavaScript API to ask for a tree.

/** A node of the tree (ESTree-like, as Babel gives it). */
export interface AstNode {
  type: string
  loc?: { start: { line: number }; end: { line: number } }
  [key: string]: unknown
}

/** The tree of a TypeScript file (JSX too when it is a .tsx). */
export function parseSource(path: string, text: string): AstNode {
  return parse(text, { sourceType: 'module', sourceFilename: path, plugins: path.endsWith('.tsx') ? ['typescript', 'jsx'] : ['typescript'] }).program as unknown as AstNode
}

/** Calls `visit` on every node below `root`, depth first, each with its parent. */
export function walk(root: AstNode, visit: (node: AstNode, parent: AstNode | undefined) => void): void {
  const go = (node: AstNode, parent: AstNode | undefined): void => {
    visit(node, parent)
    for (const [key, value] of Object.entries(node)) {
      if (key === 'loc' || key.endsWith('Comments') || key === 'extra') continue
      for (const child of Array.isArray(value) ? value : [value]) {
        if (child && typeof child === 'object' && typeof (child as AstNode).type === 'string') go(child as AstNode, node)
      }
    }
  }
  go(root, undefined)
}

const _literal = (node: unknown): string | undefined => {
  const n = node as AstNode | undefined
  return n?.type === 'StringLiteral' ? (n.value as string) : undefined
}

/** The module specifiers a file names: imports and re-exports (types too), `import()` (a type's too) and `require()` of a string. */
export function importedSpecifiers(path: string, text: string): string[] {
  const found: string[] = []
  walk(parseSource(path, text), (node) => {
    let spec: string | undefined
    if (node.type === 'ImportDeclaration' || node.type === 'ExportAllDeclaration' || node.type === 'ExportNamedDeclaration') spec = _literal(node.source)
    else if (node.type === 'ImportExpression' || node.type === 'TSImportType') spec = _literal(node.source)
    else if (node.type === 'CallExpression') {
      const callee = node.callee as AstNode
      const args = node.arguments as unknown[]
      if (callee.type === 'Import' || (callee.type === 'Identifier' && callee.name === 'require')) spec = _literal(args[0])
    }
    if (spec !== undefined) found.push(spec)
  })
  return found
}

const FUNCTIONS = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression', 'ObjectMethod', 'ClassMethod', 'ClassPrivateMethod'])

/** The name a function is known by: its own, its key's (methods, accessors, `constructor`), the variable it is assigned to, else `(anonymous)`. */
function _name(node: AstNode, parent: AstNode | undefined): string {
  const own = (node.id ?? node.key) as AstNode | undefined
  if (own?.type === 'Identifier') return own.name as string
  if (own?.type === 'PrivateName') return `#${((own.id as AstNode).name as string)}`
  if (own && _literal(own) !== undefined) return JSON.stringify(_literal(own))
  if (parent?.type === 'VariableDeclarator' && (parent.id as AstNode).type === 'Identifier') return (parent.id as AstNode).name as string
  return '(anonymous)'
}

/** Every function, arrow, method, accessor and constructor with a body, with its first line and its length in lines. */
export function functionLengths(path: string, text: string): { name: string; line: number; lines: number }[] {
  const found: { name: string; line: number; lines: number }[] = []
  walk(parseSource(path, text), (node, parent) => {
    if (!FUNCTIONS.has(node.type) || !node.body || !node.loc) return
    found.push({ name: _name(node, parent), line: node.loc.start.line, lines: node.loc.end.line - node.loc.start.line + 1 })
  })
  return found
}

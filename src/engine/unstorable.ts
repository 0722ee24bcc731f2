/** A row of the source holding a string that PostgreSQL cannot store (CONTRACT §16). */
export class UnstorableRow extends Error {
  readonly table: string
  readonly row: string
  readonly column: string

  constructor(table: string, row: string, column: string, written = 'nothing was written') {
    super(`table ${table}, row ${row}, column ${column} holds U+0000 (NUL), which PostgreSQL cannot store; `
      + `change or remove that value on the source and copy again; ${written}`)
    this.table = table
    this.row = row
    this.column = column
  }
}

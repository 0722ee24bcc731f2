export { invoiceRoutes } from './routes.ts'
export { toInvoice } from './view.ts'
export { addToAmountPaid, assertPayable } from './balance.ts'
export type { Invoice } from './schema.ts'

import { Command } from 'commander'
import { CliError, dataCommand, print, table, withDb } from './util.ts'

export function tenantsCommand(): Command {
  const cmd = new Command('tenants').description('create and list tenants (one per operator organisation)')
  dataCommand(cmd.command('create').description('create a tenant'))
    .requiredOption('--name <name>', 'display name of the tenant')
    .action((opts) => withDb(opts, async ({ db }) => {
      const name = String(opts.name).trim()
      if (!name || name.length > 200) throw new CliError('--name must be 1-200 characters', 2)
      const { createTenant } = await import('../src/modules/tenants/service.ts')
      const tenant = await createTenant(db, name, new Date())
      print(opts, tenant, () => `created tenant ${tenant.id} (${tenant.name})`)
    }))
  dataCommand(cmd.command('list').description('list all tenants'))
    .action((opts) => withDb(opts, async ({ db }) => {
      const { listTenants } = await import('../src/modules/tenants/service.ts')
      const tenants = await listTenants(db)
      print(opts, tenants, () => table(tenants, ['id', 'name', 'created_at']))
    }))
  return cmd
}

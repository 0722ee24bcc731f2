import { Command } from 'commander'
import { renderTable, styleFor, timeCell } from './format.ts'
import { CliError, dataCommand, print, tableCommand, withDb } from './util.ts'

export function tenantsCommand(): Command {
  const cmd = new Command('tenants').description('create and list tenants (one per operator organisation)')
    .addHelpText('after', '\nExamples:\n  $ travelops tenants create --name "Nordic Trails"\n  $ travelops tenants list')
  dataCommand(cmd.command('create').description('create a tenant'))
    .requiredOption('--name <name>', 'display name of the tenant')
    .addHelpText('after', '\nExamples:\n  $ travelops tenants create --name "Nordic Trails"\n  $ travelops tenants create --name "Nordic Trails" --json | jq -r .id')
    .action((opts) => withDb(opts, async ({ db }) => {
      const name = String(opts.name).trim()
      if (!name || name.length > 200) throw new CliError('--name must be 1-200 characters', 2)
      const { createTenant } = await import('../src/modules/tenants/index.ts')
      const tenant = await createTenant(db, name, new Date())
      print(opts, tenant, () => `created tenant ${tenant.id} (${tenant.name})`)
    }))
  tableCommand(cmd.command('list').description('list all tenants'))
    .addHelpText('after', '\nExamples:\n  $ travelops tenants list\n  $ travelops tenants list --json | jq -r \'.[].id\'')
    .action((opts) => withDb(opts, async ({ db }) => {
      const [{ listTenants }, { shortIds }] = await Promise.all([import('../src/modules/tenants/index.ts'), import('./short-ids.ts')])
      const tenants = await listTenants(db)
      if (opts.json) return print(opts, tenants, () => '')
      const short = opts.wide ? undefined : await shortIds(db, 'tenants', tenants.map((t) => t.id))
      const time = timeCell(opts.wide, new Date())
      print(opts, tenants, () => renderTable(tenants, [
        { header: 'ID', value: (t) => short?.get(t.id) ?? t.id },
        { header: 'NAME', value: (t) => t.name, flex: true },
        { header: 'CREATED', value: (t) => time(t.created_at) },
      ], styleFor(opts), 'no tenants yet: create one with travelops tenants create --name "<name>"'))
    }))
  return cmd
}

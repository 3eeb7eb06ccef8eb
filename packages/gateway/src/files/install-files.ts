import type { Service } from '@atrium/platform'
import type { GatewayConfig } from '../config.ts'
import type { ModuleDirectory } from '../proxy/module-instances.ts'
import type { GatewayStore } from '../store.ts'
import downloadsPlugin from './downloads.plugin.ts'
import { createFileCatalogClient } from './file-catalog-client.ts'
import filesPlugin from './files.plugin.ts'
import { createLocalFileStorage } from './local-storage.ts'
import { createS3FileStorage } from './s3-storage.ts'
import { createUploads } from './uploads.repository.ts'

type FilesInstallOptions = { config: GatewayConfig; modules: ModuleDirectory; now: () => number } & Pick<
  GatewayStore,
  'db' | 'dialect' | 'nextTick'
>

/**
 * Resumable uploads (tus) and downloads, onto local disk or an S3-compatible store; the chat
 * module's catalogue says who may read a file (docs/files.md). Returns what the periodic sweep
 * cleans (upload-sweep.ts).
 */
export function installFiles(app: Service, { config, modules, now, db, dialect, nextTick }: FilesInstallOptions) {
  const uploads = createUploads(db, dialect, nextTick, now)
  const fileStorage =
    config.FileStorage === 's3'
      ? createS3FileStorage(config.Files.S3)
      : createLocalFileStorage(config.LocalFileStoragePath)
  const catalogModule = modules.get(config.Files.CatalogModule)
  const catalog = catalogModule
    ? createFileCatalogClient({ instances: catalogModule, serviceSecret: config.ServiceSecret })
    : undefined
  app.register(filesPlugin, {
    prefix: '/auth/v1',
    uploads,
    storage: fileStorage,
    settings: config.Files,
    serviceSecret: config.ServiceSecret,
    catalog,
    now,
  })
  app.register(downloadsPlugin, { prefix: '/auth', uploads, storage: fileStorage, catalog })
  return { uploads, storage: fileStorage, catalog, now }
}

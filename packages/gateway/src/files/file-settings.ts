import { Type } from 'typebox'

/**
 * The file service's settings (docs/files.md): where bytes live, upload limits and the S3 backend.
 * Spread into the gateway's settings; docs/configuration.md lists them with the rest.
 */
export const fileSettings = {
  LocalFileStoragePath: Type.String({
    default: 'data/files',
    description:
      'Directory for uploaded file bytes on local disk (created when missing); recommended for single-proxy deployments.',
  }),
  FileStorage: Type.Union([Type.Literal('local'), Type.Literal('s3')], {
    default: 'local',
    description:
      'Where upload bytes live: `local` (LocalFileStoragePath, one gateway) or `s3` (an S3-compatible object store, Files.S3, several gateways).',
  }),
  Files: Type.Object(
    {
      CatalogModule: Type.String({
        default: 'chat',
        pattern: '^[a-z][a-z0-9-]*$',
        description:
          'The module (a name in `Modules`) that holds file metadata on its messages and answers who may download a file.',
      }),
      MaxFileSize: Type.Integer({
        default: 1024 * 1024 * 1024,
        minimum: 1,
        maximum: Number.MAX_SAFE_INTEGER,
        description: 'Largest upload in bytes (Upload-Length); larger ones are refused at creation (413).',
      }),
      MaxChunkSize: Type.Integer({
        default: 1024 * 1024 * 1024,
        minimum: 1,
        maximum: Number.MAX_SAFE_INTEGER,
        description:
          'Largest body of one PATCH in bytes (413 beyond it); chunks are streamed to storage, never held in memory.',
      }),
      DeniedContentTypes: Type.Array(Type.String({ pattern: '^[a-z0-9!#$&^_.+-]+/([a-z0-9!#$&^_.+-]+|\\*)$' }), {
        default: [],
        description:
          'Content types (the `filetype` upload metadata) refused at creation (415), e.g. `["application/x-msdownload", "video/*"]`.',
      }),
      QuotaBytes: Type.Integer({
        default: 10 * 1024 * 1024 * 1024,
        minimum: 0,
        maximum: Number.MAX_SAFE_INTEGER,
        description:
          "Bytes one user's uploads (finished or not) may declare together; more is refused at creation (0: off).",
      }),
      ExpirySeconds: Type.Integer({
        default: 86_400,
        minimum: 60,
        description:
          'An unfinished upload expires this long after its creation or last accepted chunk, and a finished one that no message names this long after its last chunk; the session sweep then removes it.',
      }),
      RequireChecksum: Type.Boolean({
        default: false,
        description:
          'Refuse a PATCH without Upload-Checksum (crc32); off so that tus clients without the checksum extension work.',
      }),
      S3: Type.Object(
        {
          Endpoint: Type.String({
            default: '',
            pattern: '^(https?://[^?#]+)?$',
            description:
              'Base URL of the S3-compatible store, e.g. `https://s3.eu-west-1.amazonaws.com` (FileStorage `s3`).',
          }),
          Region: Type.String({ default: 'us-east-1', description: 'Region the requests are signed for (SigV4).' }),
          Bucket: Type.String({ default: '', description: 'Bucket that holds the uploads; it must exist.' }),
          AccessKeyId: Type.String({ default: '', description: 'Access key id the requests are signed with.' }),
          SecretAccessKey: Type.String({
            default: '',
            description: 'Secret access key (kept out of logs and CLI output).',
          }),
          ForcePathStyle: Type.Boolean({
            default: true,
            description:
              'Address objects as `{Endpoint}/{Bucket}/{key}`; false for virtual-hosted `{Bucket}.{Endpoint host}/{key}`.',
          }),
          PartSize: Type.Integer({
            default: 8 * 1024 * 1024,
            minimum: 5 * 1024 * 1024,
            maximum: 5 * 1024 * 1024 * 1024,
            description:
              'Bytes of each multipart part but the last (S3 wants at least 5 MiB); smaller chunks gather in a tail object until a part is full.',
          }),
          AllowPrivateAddresses: Type.Boolean({
            default: false,
            description:
              'Let Endpoint be a loopback, private or link-local address (a store on the same host or network).',
          }),
          StagingPath: Type.String({
            default: '',
            description:
              'Directory where a chunk waits on local disk until it is checked and sent as parts (empty: the system temporary directory).',
          }),
          TimeoutMs: Type.Integer({
            default: 120_000,
            minimum: 1000,
            description: 'Time one S3 request may take until its answer starts, including the upload of a part.',
          }),
        },
        { default: {}, additionalProperties: false },
      ),
    },
    { default: {}, additionalProperties: false },
  ),
}

/** The settings S3 storage cannot start without, named when FileStorage is "s3". */
export function checkFileStorage(config: {
  FileStorage: string
  Files: { S3: Record<'Endpoint' | 'Bucket' | 'AccessKeyId' | 'SecretAccessKey', string> }
}): string[] {
  if (config.FileStorage !== 's3') return []
  const s3 = config.Files.S3
  return (['Endpoint', 'Bucket', 'AccessKeyId', 'SecretAccessKey'] as const)
    .filter((name) => s3[name] === '')
    .map((name) => `Files.S3.${name}: required when FileStorage is "s3"`)
}

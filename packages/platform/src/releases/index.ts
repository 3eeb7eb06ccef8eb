export {
  activeVersion,
  CURRENT_POINTER,
  currentEntry,
  listBuilds,
  listReleaseProcesses,
  MANIFEST_FILE,
  pointCurrent,
  type ReleaseManifest,
  readManifest,
  releaseDir,
} from './releases.ts'

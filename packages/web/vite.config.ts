import { clientViteConfig } from './build-client.ts'

/** `vite build` in packages/web uses the same settings as `npm start` and `npm run build`. */
export default clientViteConfig()

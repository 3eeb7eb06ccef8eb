export { buildGateway, type Gateway, type GatewayOptions } from './app.ts'
export { type GatewayConfig, gatewaySettings, loadGatewayConfig } from './config.ts'

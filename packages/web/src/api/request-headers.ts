/** The headers of every API request: JSON answers, and this device's GUID (spec: X-Device-Guid). */
export function apiHeaders(deviceGuid: string): Record<string, string> {
  return { accept: 'application/json', 'x-device-guid': deviceGuid }
}

export interface User {
  id: number;
  name: string;
}

export async function fetchUser(id: number, opts?: { cache: boolean }): Promise<User> {
  const res = await fetch(toUrl(`/users/${id}`));
  return res.json();
}

export const toUrl = (path: string): string => `https://example.invalid${path}`;

export class Client {
  constructor(private base: string) {}

  request(path: string, retries = 2): Promise<Response> {
    return fetch(this.base + toUrl(path));
  }
}

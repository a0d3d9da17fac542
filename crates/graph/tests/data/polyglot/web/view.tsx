import { fetchUser } from "./api";

export function UserCard(props: { id: number }) {
  const user = fetchUser(props.id);
  return <div>{String(user)}</div>;
}

export { freePort } from "../../server/net/free-port";

// Palimpsest for OpenCode: written by `palimpsest setup opencode`; `palimpsest setup opencode --undo` removes it.
//
// Before each user turn (`chat.message`) it runs `palimpsest recall --hook` with the prompt
// and adds the recall block to that turn's system prompt (`experimental.chat.system.transform`,
// every model call of the turn sees it). When a turn ends (the `session.idle` event) it runs
// `palimpsest capture --agent opencode`, which reads the turn from OpenCode's own database.
// Neither can get in OpenCode's way: a failure, a time limit or a server that is down gives
// no block and no error, and capture spools what it could not send.
import { spawn } from "node:child_process"

const RECALL = __RECALL__
const CAPTURE = __CAPTURE__
const RECALL_WAIT_MS = __RECALL_WAIT_MS__ // `recall --hook` answers nothing by itself a second before (its --timeout); this is the backstop
const CAPTURE_WAIT_MS = 60000

// `argv` with `input` on stdin: its stdout when it exits 0, else "" (never rejects).
function run(argv, input, waitMs) {
  return new Promise((resolve) => {
    let out = ""
    let done = false
    let child
    const finish = (value) => {
      if (done) return
      done = true
      clearTimeout(timer)
      resolve(value)
    }
    const timer = setTimeout(() => {
      try {
        child?.kill()
      } catch {}
      finish("")
    }, waitMs)
    try {
      child = spawn(argv[0], argv.slice(1), { stdio: ["pipe", "pipe", "ignore"] })
    } catch {
      return finish("")
    }
    child.on("error", () => finish(""))
    child.stdout.on("data", (chunk) => {
      out += chunk
    })
    child.on("close", (code) => finish(code === 0 ? out : ""))
    child.stdin.on("error", () => {})
    child.stdin.end(input)
  })
}

// The words the user typed: the message's text parts, without those OpenCode or a plugin added.
function promptOf(parts) {
  return (Array.isArray(parts) ? parts : [])
    .filter((p) => p && p.type === "text" && typeof p.text === "string" && !p.synthetic && !p.ignored)
    .map((p) => p.text)
    .join("\n")
    .trim()
}

export const PalimpsestPlugin = async ({ directory } = {}) => {
  const blocks = new Map() // session id -> the recall block (a promise) of its current turn
  return {
    "chat.message": async (input, output) => {
      const session = input?.sessionID
      const prompt = promptOf(output?.parts)
      if (!session || !prompt) return
      const hook = JSON.stringify({ session_id: session, hook_event_name: "chat.message", prompt, cwd: directory })
      blocks.set(session, run(RECALL, hook, RECALL_WAIT_MS).then((text) => text.trim()))
    },
    "experimental.chat.system.transform": async (input, output) => {
      const pending = input?.sessionID ? blocks.get(input.sessionID) : undefined
      if (!pending || !Array.isArray(output?.system)) return
      const block = await pending
      if (block) output.system.push(block)
    },
    event: async ({ event } = {}) => {
      if (event?.type !== "session.idle") return
      const session = event.properties?.sessionID
      if (!session) return
      const hook = JSON.stringify({ session_id: session, hook_event_name: "session.idle", cwd: directory })
      void run(CAPTURE, hook, CAPTURE_WAIT_MS) // not awaited: OpenCode does not wait for capture
    },
  }
}

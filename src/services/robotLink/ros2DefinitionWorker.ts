// The thread that checks a ROS 2 message definition a robot advertises (started by
// ros2DefinitionOffThread.ts through ros2DefinitionWorkerBootstrap.mjs, which lowers the thread's
// priority and registers tsx), so that neither the parse of a hostile text nor its checks run on
// the services' event loop, which carries STOP.
// One task at a time: the text's bounds (src/domain/robotLink/ros2DefinitionBounds.ts), the parse
// (@foxglove/rosmsg, ROS 2 grammar), the parsed definitions' bounds, and that it is the unitree_hg
// LowState the console maps (src/domain/robotLink/unitreeLowState.ts). The checked definitions go
// back as plain data; a refusal goes back as the error's type and fields.

import { parse } from '@foxglove/rosmsg';
import {
  checkRos2DefinitionBounds,
  Ros2DefinitionBoundsError,
  scanRos2DefinitionText,
} from '../../domain/robotLink/ros2DefinitionBounds';
import { checkUnitreeLowStateDefinition, UnitreeDefinitionError } from '../../domain/robotLink/unitreeLowState';
import { serveTasks } from '../os/taskWorkerPort';
import type { Ros2DefinitionReply, Ros2DefinitionTask } from './ros2DefinitionOffThread';

/** A parser's message is kept to this many characters (it may quote a whole line). */
const PARSE_MESSAGE_CHARS = 200;

function check(task: Ros2DefinitionTask): Ros2DefinitionReply {
  const { rootType, schema } = task;
  try {
    const index = scanRos2DefinitionText(schema, rootType);
    let definitions: ReturnType<typeof parse>;
    try {
      definitions = parse(schema, { ros2: true });
    } catch (err) {
      const message = String((err as Error)?.message ?? err).replace(/\s+/g, ' ');
      throw new UnitreeDefinitionError(
        rootType,
        `the advertised definition does not parse: ${message.length > PARSE_MESSAGE_CHARS ? `${message.slice(0, PARSE_MESSAGE_CHARS)}…` : message}`,
      );
    }
    const cost = checkRos2DefinitionBounds(definitions, rootType, index);
    checkUnitreeLowStateDefinition(definitions);
    return { ok: true, checked: { definitions, cost } };
  } catch (err) {
    if (err instanceof Ros2DefinitionBoundsError)
      return { ok: false, error: { type: 'bounds', location: err.location, reason: err.reason } };
    if (err instanceof UnitreeDefinitionError)
      return { ok: false, error: { type: 'unitree', field: err.field, reason: err.reason } };
    return { ok: false, error: { type: 'other', message: String((err as Error)?.message ?? err) } };
  }
}

serveTasks('ros2DefinitionWorker.ts', (task: Ros2DefinitionTask) => ({ reply: check(task) }));

// `node test/helpers/hostileRobotChild.ts ros2-robot c1|c2` (through nodeArgsFor): the hostile ROS 2
// robot of hostStopHostile.test.ts in a process of its own (test/helpers/hostileStopInputs.ts,
// C1 and C2); prints {"url"} once listening and serves until SIGTERM.
import { serveHostileRobot } from './hostileStopInputs';

if (process.argv[2] !== 'ros2-robot') throw new Error('usage: hostileRobotChild.ts ros2-robot c1|c2');
await serveHostileRobot(process.argv[3] ?? '');

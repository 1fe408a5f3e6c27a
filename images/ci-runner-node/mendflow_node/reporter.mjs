// mendflow's reporter for `node --test`: one JSON object a line for each test that ends, with the titles of the
// suites around it, so the runner (results.py) can name it FILE::NAME as it names jest's and vitest's tests.
const stacks = new Map();
// What a test file printed to stderr: a file that fails to load says why only there.
const stderr = new Map();
const STDERR_MAX = 8192;

function titlesOf(data) {
  const stack = stacks.get(data.file ?? '') ?? [];
  return [...stack.slice(0, data.nesting), data.name];
}

function describe(error) {
  const cause = error?.cause ?? error;
  if (cause === undefined || cause === null) return '';
  return String(cause.stack ?? cause.message ?? cause);
}

export default async function* mendflowReporter(source) {
  for await (const { type, data } of source) {
    if (type === 'test:start') {
      const stack = stacks.get(data.file ?? '') ?? [];
      stack.length = data.nesting;
      stack.push(data.name);
      stacks.set(data.file ?? '', stack);
    } else if (type === 'test:stderr') {
      const said = (stderr.get(data.file ?? '') ?? '') + (data.message ?? '');
      stderr.set(data.file ?? '', said.slice(-STDERR_MAX));
    } else if (type === 'test:pass' || type === 'test:fail') {
      const fileFailed = type === 'test:fail' && data.nesting === 0 && data.name === data.file;
      yield JSON.stringify({
        type: type.slice('test:'.length),
        file: data.file ?? '',
        titles: titlesOf(data),
        // A describe block, or a test failing only because a subtest did: its tests are counted already.
        suite: data.details?.type === 'suite' || data.details?.error?.failureType === 'subtestsFailed',
        skip: Boolean(data.skip || data.todo),
        error: fileFailed ? stderr.get(data.file) || describe(data.details?.error)
          : type === 'test:fail' ? describe(data.details?.error) : '',
      }) + '\n';
    }
  }
}

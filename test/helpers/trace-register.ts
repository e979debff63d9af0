import { register } from 'node:module';

register('./trace-hooks.js', import.meta.url);

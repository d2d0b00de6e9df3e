// The SmartApp's configuration as the SmartThings CONFIGURATION lifecycle asks for it (SmartThings developer
// docs, "Configuration": INITIALIZE → configurationData.initialize, PAGE → configurationData.page). The settings
// are the interface document's Config: contactSensor, lightSwitch, minutes.

export const SETTING_CONTACT_SENSOR = 'contactSensor';
export const SETTING_LIGHT_SWITCH = 'lightSwitch';
export const SETTING_MINUTES = 'minutes';
export const FIRST_PAGE_ID = '1';
/** The one-off schedule that turns the lights off; also the TIMER_EVENT name it fires with. */
export const LIGHTS_OFF_SCHEDULE = 'lightsOff';

export interface InitializeReply {
  configurationData: {
    initialize: {
      id: string;
      name: string;
      description: string;
      permissions: string[];
      firstPageId: string;
    };
  };
}

export interface SettingDefinition {
  id: string;
  name: string;
  description: string;
  type: 'DEVICE' | 'NUMBER';
  required: boolean;
  multiple: boolean;
  capabilities?: string[];
  permissions?: string[];
}

export interface PageReply {
  configurationData: {
    page: {
      pageId: string;
      name: string;
      nextPageId: string | null;
      previousPageId: string | null;
      complete: boolean;
      sections: Array<{ name: string; settings: SettingDefinition[] }>;
    };
  };
}

export function initializeReply(): InitializeReply {
  return {
    configurationData: {
      initialize: {
        id: 'doorLights',
        name: 'Door lights',
        description: 'Turns lights on when a door opens and off a few minutes after it closes',
        // Device access comes from the device settings' own permissions (r, r+x); nothing location-wide is needed.
        permissions: [],
        firstPageId: FIRST_PAGE_ID,
      },
    },
  };
}

/** The app has one page, so any pageId gets it (SmartThings only asks for ids this app handed out). */
export function pageReply(): PageReply {
  return {
    configurationData: {
      page: {
        pageId: FIRST_PAGE_ID,
        name: 'Door lights',
        nextPageId: null,
        previousPageId: null,
        complete: true,
        sections: [
          {
            name: 'When this door opens',
            settings: [
              {
                id: SETTING_CONTACT_SENSOR,
                name: 'Which door?',
                description: 'Tap to set',
                type: 'DEVICE',
                required: true,
                multiple: false,
                capabilities: ['contactSensor'],
                permissions: ['r'],
              },
            ],
          },
          {
            name: 'Turn on these lights',
            settings: [
              {
                id: SETTING_LIGHT_SWITCH,
                name: 'Which lights?',
                description: 'Tap to set',
                type: 'DEVICE',
                required: true,
                multiple: true,
                capabilities: ['switch'],
                permissions: ['r', 'x'],
              },
            ],
          },
          {
            name: 'Turn them off',
            settings: [
              {
                id: SETTING_MINUTES,
                name: 'Minutes after the door closes',
                description: 'Enter a number of minutes',
                type: 'NUMBER',
                required: true,
                multiple: false,
              },
            ],
          },
        ],
      },
    },
  };
}
